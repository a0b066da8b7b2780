#!/usr/bin/env bash
# Install MathJax 3 from the npm registry (version pinned in package.json and
# package-lock.json) and copy its browser bundle to book/_static/mathjax/, which
# Sphinx publishes as _build/html/_static/mathjax/. The built book then typesets
# math with no network access (_config.yml: mathjax_path: mathjax/tex-svg-full.js).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v npm >/dev/null 2>&1; then
    echo "fetch_mathjax: npm (Node.js) is needed to install MathJax locally." >&2
    echo "  Debian/Ubuntu: apt-get install nodejs npm" >&2
    exit 1
fi

# `npm ci` installs exactly what package-lock.json records (integrity-checked).
npm ci --no-audit --no-fund --loglevel=error

src=node_modules/mathjax/es5
dst=book/_static/mathjax
if [ ! -f "$src/tex-svg-full.js" ]; then
    echo "fetch_mathjax: $src/tex-svg-full.js missing after npm ci" >&2
    exit 1
fi
rm -rf "$dst"
mkdir -p "$dst"
# The combined component plus the folders it loads lazily (menu, a11y, speech rules).
cp "$src/tex-svg-full.js" "$dst/"
for d in a11y adaptors input output sre ui; do
    cp -r "$src/$d" "$dst/"
done
version=$(node -p "require('./node_modules/mathjax/package.json').version")
echo "$version" > "$dst/VERSION"
echo "fetch_mathjax: MathJax $version copied to $dst"
