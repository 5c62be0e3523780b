#!/bin/sh
# Logs in the protocol's JSON-line format, with a plain line between, then exits 0.
printf '{"timestamp": "2026-01-01T12:00:00Z", "level": "info", "message": "Starting analysis"}\n'
echo "[INFO] a plain line"
printf '{"timestamp": "2026-01-01T12:00:02Z", "level": "error", "message": "Failed to parse config"}\n'
