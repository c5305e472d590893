# The PCRE2 the engine bundle carries: Debian's source tarball of the version Debian 12 builds the engine with.
set(SLIPWAY_PCRE2_VERSION 10.42)
set(SLIPWAY_PCRE2_SHA256 c33b418e3b936ee3153de2c61cc638e7e4fe3156022a5c77d0711bcbb9d64f1f)
set(SLIPWAY_PCRE2_URL "http://deb.debian.org/debian/pool/main/p/pcre2/pcre2_${SLIPWAY_PCRE2_VERSION}.orig.tar.gz")
