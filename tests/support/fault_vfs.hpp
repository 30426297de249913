// tests/support/fault_vfs.hpp -- a SQLite VFS for tests that forwards to the default one and fails the Nth
// write or sync (from arming) with a chosen error: disk full and I/O errors on demand.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <cstring>

namespace ania_test {

struct fault_plan {
    std::atomic<int> writes_until_failure{-1};  ///< -1: never; 0: the next xWrite fails; n: after n more
    std::atomic<int> syncs_until_failure{-1};
    std::atomic<int> error_code{SQLITE_IOERR_WRITE};
    std::atomic<int> writes_seen{0}, faults_injected{0};
    void arm_write(int n, int code) { error_code = code; writes_until_failure = n; }
    void arm_sync(int n, int code) { error_code = code; syncs_until_failure = n; }
    void disarm() { writes_until_failure = -1; syncs_until_failure = -1; }
};

inline fault_plan& faults() {
    static fault_plan plan;
    return plan;
}

namespace detail {

struct fault_file {
    sqlite3_file base;
    sqlite3_file* real;  // points just after this struct
};

inline bool take(std::atomic<int>& counter) {
    int n = counter.load();
    while (n >= 0) {
        if (counter.compare_exchange_weak(n, n - 1)) return n == 0;
    }
    return false;
}

inline sqlite3_file* real(sqlite3_file* f) { return reinterpret_cast<fault_file*>(f)->real; }

inline int f_close(sqlite3_file* f) {
    const int rc = real(f)->pMethods ? real(f)->pMethods->xClose(real(f)) : SQLITE_OK;
    return rc;
}
inline int f_read(sqlite3_file* f, void* b, int n, sqlite3_int64 o) { return real(f)->pMethods->xRead(real(f), b, n, o); }
inline int f_write(sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
    ++faults().writes_seen;
    if (take(faults().writes_until_failure)) {
        ++faults().faults_injected;
        return faults().error_code.load();
    }
    return real(f)->pMethods->xWrite(real(f), b, n, o);
}
inline int f_truncate(sqlite3_file* f, sqlite3_int64 s) { return real(f)->pMethods->xTruncate(real(f), s); }
inline int f_sync(sqlite3_file* f, int flags) {
    if (take(faults().syncs_until_failure)) {
        ++faults().faults_injected;
        return faults().error_code.load() == SQLITE_FULL ? SQLITE_FULL : SQLITE_IOERR_FSYNC;
    }
    return real(f)->pMethods->xSync(real(f), flags);
}
inline int f_size(sqlite3_file* f, sqlite3_int64* s) { return real(f)->pMethods->xFileSize(real(f), s); }
inline int f_lock(sqlite3_file* f, int l) { return real(f)->pMethods->xLock(real(f), l); }
inline int f_unlock(sqlite3_file* f, int l) { return real(f)->pMethods->xUnlock(real(f), l); }
inline int f_check(sqlite3_file* f, int* r) { return real(f)->pMethods->xCheckReservedLock(real(f), r); }
inline int f_fcntl(sqlite3_file* f, int op, void* a) { return real(f)->pMethods->xFileControl(real(f), op, a); }
inline int f_sector(sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
inline int f_devchar(sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
inline int f_shmmap(sqlite3_file* f, int a, int b, int c, void volatile** d) { return real(f)->pMethods->xShmMap(real(f), a, b, c, d); }
inline int f_shmlock(sqlite3_file* f, int a, int b, int c) { return real(f)->pMethods->xShmLock(real(f), a, b, c); }
inline void f_shmbarrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
inline int f_shmunmap(sqlite3_file* f, int d) { return real(f)->pMethods->xShmUnmap(real(f), d); }
inline int f_fetch(sqlite3_file* f, sqlite3_int64 o, int n, void** p) { return real(f)->pMethods->xFetch(real(f), o, n, p); }
inline int f_unfetch(sqlite3_file* f, sqlite3_int64 o, void* p) { return real(f)->pMethods->xUnfetch(real(f), o, p); }

inline const sqlite3_io_methods fault_methods = {3, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock,
                                                f_check, f_fcntl, f_sector, f_devchar, f_shmmap, f_shmlock, f_shmbarrier,
                                                f_shmunmap, f_fetch, f_unfetch};

inline sqlite3_vfs*& base_vfs() {
    static sqlite3_vfs* v = nullptr;
    return v;
}

inline int v_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out) {
    auto* ff = reinterpret_cast<fault_file*>(f);
    ff->real = reinterpret_cast<sqlite3_file*>(ff + 1);
    std::memset(ff->real, 0, static_cast<std::size_t>(base_vfs()->szOsFile));
    const int rc = base_vfs()->xOpen(base_vfs(), name, ff->real, flags, out);
    ff->base.pMethods = ff->real->pMethods ? &fault_methods : nullptr;
    return rc;
}

} // namespace detail

/// Registers the "ania-fault" VFS once and returns its name.
inline const char* fault_vfs_name() {
    static const char* name = [] {
        static sqlite3_vfs vfs;
        detail::base_vfs() = sqlite3_vfs_find(nullptr);
        vfs = *detail::base_vfs();
        vfs.zName = "ania-fault";
        vfs.szOsFile = static_cast<int>(sizeof(detail::fault_file)) + detail::base_vfs()->szOsFile;
        vfs.xOpen = detail::v_open;
        vfs.pNext = nullptr;
        sqlite3_vfs_register(&vfs, 0);
        return "ania-fault";
    }();
    return name;
}

} // namespace ania_test
