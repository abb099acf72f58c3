#!/usr/bin/env bash
# Refresh the graph library inlined into `lineage ... --html` pages (lineage_udfs/cli/static/).
# Pinned npm packages; run by hand when bumping a version, the files are committed.
#   cytoscape        the graph view (pan, zoom, click)
#   cytoscape-dagre  left-to-right layered layout (bundles @dagrejs/dagre)
set -euo pipefail
CYTOSCAPE=3.34.4
CYTOSCAPE_DAGRE=4.0.1
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dest=lineage_udfs/cli/static
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "cytoscape@$CYTOSCAPE" "cytoscape-dagre@$CYTOSCAPE_DAGRE" >/dev/null)
mkdir -p "$work/a" "$work/b" "$dest"
tar -xzf "$work/cytoscape-$CYTOSCAPE.tgz" -C "$work/a"
tar -xzf "$work/cytoscape-dagre-$CYTOSCAPE_DAGRE.tgz" -C "$work/b"
cp "$work/a/package/dist/cytoscape.min.js" "$dest/cytoscape.min.js"
cp "$work/a/package/LICENSE" "$dest/cytoscape.LICENSE"
cp "$work/b/package/dist/cytoscape-dagre.min.js" "$dest/cytoscape-dagre.min.js"
cp "$work/b/package/LICENSE" "$dest/cytoscape-dagre.LICENSE"
printf 'cytoscape %s\ncytoscape-dagre %s\n' "$CYTOSCAPE" "$CYTOSCAPE_DAGRE" > "$dest/VERSIONS"
echo "vendored into $dest:"; cat "$dest/VERSIONS"
