"""Fails unless the ania subproject added nothing that builds by default and nothing to install to the parent
project. (The compiled-mode libraries are targets that build only for a parent target that links them.)"""
import json, subprocess, sys

build = sys.argv[1]
targets = json.loads(subprocess.check_output(["meson", "introspect", "--targets", build]))
from_ania = [t["name"] for t in targets if t.get("subproject") == "ania" and t.get("build_by_default")]
installed = json.loads(subprocess.check_output(["meson", "introspect", "--installed", build]))
if from_ania or installed:
    print("subproject ania leaked targets", from_ania, "or installs", installed)
    sys.exit(1)
print("subproject ania: no target built by default, nothing installed")
