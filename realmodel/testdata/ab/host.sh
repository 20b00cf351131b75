#!/bin/bash
# A scripted host agent for arm H: it answers each eval task with a known good answer, so the
# capture measures the real model (arm L) against a host that always does the work.
if [ "$1" = "-p" ] && [ "$2" = "--version" ]; then echo "scripted-host 1.0"; exit 0; fi
good=$(dirname "$0")/good
prompt="${@: -1}"
case "$prompt" in
  *"package store"*) cat "$good/code.md" ;;
  *"review notes"*) cat "$good/codify.md" ;;
  *"package shapes"*) cat "$good/agent.md" ;;
  *) cat "$good/handoff.md" ;;
esac
