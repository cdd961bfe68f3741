#!/bin/sh
echo "coverage tools are not installed in this offline workspace" >&2
exit 1
