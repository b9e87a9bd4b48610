#!/bin/sh
# The main job: set everything up, then show the sensors this install has.
. "$(dirname "$0")/setup.sh"
.venv/bin/ways sensors list
