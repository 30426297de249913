"""Fails unless the ania subproject added no build target and nothing to install to the parent project."""
import json, subprocess, sys

build = sys.argv[1]
targets = json.loads(subprocess.check_output(["meson", "introspect", "--targets", build]))
from_ania = [t["name"] for t in targets if t.get("subproject") == "ania"]
installed = json.loads(subprocess.check_output(["meson", "introspect", "--installed", build]))
if from_ania or installed:
    print("subproject ania leaked targets", from_ania, "or installs", installed)
    sys.exit(1)
print("subproject ania: no targets, nothing installed")
