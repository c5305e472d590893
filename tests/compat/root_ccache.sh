# shellcheck shell=bash
# Sourced by the steps that compile in a Debian root (torch2.sh, dockerfile_engine_stage.sh): one ccache for
# every compile there. base_dir / turns the absolute paths of a compile command into paths relative to its
# folder, so two build folders that are siblings of the source (/src/torch2-<checkout> and the Dockerfile's
# /src/build, beside /src/slipway) compile from each other's objects; the sloppiness lets objects that use a
# precompiled header hit.
# shellcheck disable=SC2034,SC2054  # used by the sourcing script; the commas are inside one value
ccache_env=(env CCACHE_DIR=/var/cache/ccache CCACHE_MAXSIZE=5G CCACHE_BASEDIR=/
            CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime)
