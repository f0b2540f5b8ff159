#!/usr/bin/env python3
"""Downloads one source archive from PyPI (no build, no metadata step) and checks its sha256.

usage: fetch_sdist.py PROJECT FILENAME DEST_DIR
pip download would prepare the package's build metadata (minutes for
llama-cpp-python); the test vocabularies only need the archive itself.
"""
import hashlib, json, os, sys, urllib.request

project, filename, dest = sys.argv[1:4]
req = urllib.request.Request(f"https://pypi.org/simple/{project}/",
                             headers={"Accept": "application/vnd.pypi.simple.v1+json"})
index = json.load(urllib.request.urlopen(req, timeout=120))
entry = next((f for f in index["files"] if f["filename"] == filename), None)
if entry is None:
    sys.exit(f"fetch_sdist: {filename} not found on PyPI for {project}")
os.makedirs(dest, exist_ok=True)
target = os.path.join(dest, filename)
data = urllib.request.urlopen(entry["url"], timeout=600).read()
if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
    sys.exit(f"fetch_sdist: sha256 mismatch for {filename}")
with open(target + ".part", "wb") as out:
    out.write(data)
os.replace(target + ".part", target)
print(target)
