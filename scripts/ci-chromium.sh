#!/usr/bin/env bash
# Installs Debian's Chromium for the answer-page browser suite (test/page/browser.test.ts).
# Idempotent and quiet: does nothing when /usr/bin/chromium exists; never downloads a browser
# from anywhere but the distribution's own package archive.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi

SUDO=''
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO='sudo'
  else
    echo "ci-chromium: /usr/bin/chromium is missing and this user cannot install packages" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
install_chromium() {
  # debconf's "delaying package configuration" note is noise on a minimal image; real errors still show.
  $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null 2> >(grep -v '^debconf: ' >&2)
}
# Update the package lists only when they do not know the package yet, or are too old to
# fetch it (a failed install is retried once after an update).
if ! apt-cache show chromium >/dev/null 2>&1; then
  $SUDO apt-get update -qq >/dev/null
fi
if ! install_chromium; then
  $SUDO apt-get update -qq >/dev/null
  install_chromium
fi

if [ ! -x /usr/bin/chromium ]; then
  echo "ci-chromium: chromium was installed but /usr/bin/chromium is still missing" >&2
  exit 1
fi
