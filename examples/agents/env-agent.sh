#!/bin/sh
# Writes the environment it was given to env.txt in its run folder, sorted, then exits 0.
env | sort > "$JRUN_RUN_FOLDER/env.txt"
