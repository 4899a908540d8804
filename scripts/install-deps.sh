#!/usr/bin/env bash
# Install what building hak needs on a fresh machine: protoc (the Hedera SDK's build needs it)
# and the wasm32-wasip2 target (plugins). Idempotent; quiet when everything is there.
set -euo pipefail
if ! command -v protoc >/dev/null 2>&1; then
  echo "installing protobuf-compiler" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq protobuf-compiler >/dev/null
fi
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  echo "adding the wasm32-wasip2 target" >&2
  rustup target add wasm32-wasip2
fi
