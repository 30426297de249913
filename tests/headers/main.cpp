// Links every generated one-header translation unit; running it proves they coexist.
int main() { return 0; }
