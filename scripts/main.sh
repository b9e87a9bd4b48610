#!/bin/sh
# The main job: set everything up, then run a scripted session through the real hook,
# dispatcher and consumers on a throwaway install (`ways demo`).
. "$(dirname "$0")/setup.sh"
.venv/bin/ways demo
