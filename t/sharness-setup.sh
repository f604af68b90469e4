# Common set-up for the integration tests: the freshly built flux and
# flux-broker come first in PATH, and no outer instance leaks in.
# Sourced by t*.t after test_description is set.
unset FLUX_URI FLUX_EXEC_PATH FLUX_BROKER_PATH
PATH="$FLUX_BUILD_DIR/src/cmd:$FLUX_BUILD_DIR/src/broker:$PATH"
export PATH
. /usr/share/sharness/sharness.sh
