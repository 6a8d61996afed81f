#!/usr/bin/env bash
# web/vendor.sh: refreshes the browser page's vendored libraries from the
# npm registry, as ES modules with their licences, into static/vendor/.
# Run it when a version below changes, and commit what it writes; the build
# needs no Node (the files are embedded as they are).
#
#   bash web/vendor.sh
set -euo pipefail
cd "$(dirname "$0")"
MARKED=18.2.1     # Markdown to HTML (MIT)
DOMPURIFY=3.5.0   # HTML sanitiser (Apache-2.0 or MPL-2.0)
HLJS=11.12.0      # code highlighting, its ES build of the common languages (BSD-3-Clause)
out=static/vendor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "marked@$MARKED" "dompurify@$DOMPURIFY" "@highlightjs/cdn-assets@$HLJS" >/dev/null)
for pkg in "marked-$MARKED" "dompurify-$DOMPURIFY" "highlightjs-cdn-assets-$HLJS"; do
  mkdir -p "$work/$pkg" && tar xzf "$work/$pkg.tgz" -C "$work/$pkg"
done
mkdir -p "$out"
cp "$work/marked-$MARKED/package/lib/marked.esm.js" "$out/marked.esm.js"
cp "$work/marked-$MARKED/package/LICENSE" "$out/LICENSE.marked"
cp "$work/dompurify-$DOMPURIFY/package/dist/purify.es.mjs" "$out/purify.es.mjs"
cp "$work/dompurify-$DOMPURIFY/package/LICENSE" "$out/LICENSE.dompurify"
cp "$work/highlightjs-cdn-assets-$HLJS/package/es/highlight.min.js" "$out/highlight.min.js"
cp "$work/highlightjs-cdn-assets-$HLJS/package/LICENSE" "$out/LICENSE.highlightjs"
printf 'marked %s\ndompurify %s\nhighlight.js %s\n' "$MARKED" "$DOMPURIFY" "$HLJS" > "$out/VERSIONS"
echo "vendored marked $MARKED, dompurify $DOMPURIFY and highlight.js $HLJS into web/$out"
