#!/usr/bin/env bash
# Copy a pom's runtime dependencies (maven-dependency-plugin copy-dependencies), or run
# another goal of that plugin (e.g. `copy`, for a pom that lists artifactItems).
#   usage: scripts/mvn-copy.sh POM [GOAL]   (env: MVN, MVN_FLAGS, MVN_SETTINGS, as the Makefile sets)
# Debian's Maven 3.8.7 prints stray ANSI resets ("ESC[0m") even with -q -B: strip them.
set -euo pipefail
pom=$1
goal=${2:-copy-dependencies}
# shellcheck disable=SC2086  # MVN_FLAGS is a list of flags
"${MVN:-mvn}" ${MVN_FLAGS:--q -B} -s "${MVN_SETTINGS:-jvm/maven-settings.xml}" -f "$pom" \
  "dependency:$goal" 2>&1 | sed -e 's/\x1b\[[0-9;]*m//g' -e '/^$/d'
