"""The report's inline stylesheet: readable type, quiet tables, no external assets."""

CSS = """
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --rule: #d1d9e0;
  --accent: #0969da; --note-bg: #fff8c5; --note-rule: #d4a72c; --stripe: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: var(--ink);
  font: 16px/1.55 -apple-system, "Segoe UI", "Helvetica Neue", Arial, sans-serif; }
main { max-width: 72rem; margin: 0 auto; padding: 2rem 1.5rem 3rem; }
header { border-bottom: 2px solid var(--rule); margin-bottom: 1.5rem; }
h1 { font-size: 1.9rem; line-height: 1.2; margin: 0 0 .4rem; }
h2 { font-size: 1.35rem; margin: 2.2rem 0 .6rem; padding-bottom: .25rem;
  border-bottom: 1px solid var(--rule); }
.subtitle { color: var(--muted); margin: 0 0 1rem; font-size: 1.05rem; }
p { margin: .6rem 0; max-width: 46rem; }
a { color: var(--accent); }
nav h2 { font-size: 1rem; border: none; margin: 0 0 .3rem; }
nav ol { margin: 0 0 1rem; padding-left: 1.4rem; }
.note { background: var(--note-bg); border-left: 4px solid var(--note-rule);
  padding: .4rem .9rem; margin: 1rem 0; }
.table-wrap { overflow-x: auto; margin: 1rem 0 1.4rem; }
table { border-collapse: collapse; font-size: .9rem; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; color: var(--muted); padding: 0 0 .4rem; }
th, td { padding: .3rem .65rem; border-bottom: 1px solid var(--rule); text-align: left;
  vertical-align: top; }
td { white-space: nowrap; }
td.long div { white-space: normal; max-width: 18rem; display: -webkit-box; overflow: hidden;
  -webkit-box-orient: vertical; -webkit-line-clamp: 3; line-clamp: 3; }
thead th { border-bottom: 2px solid var(--ink); }
.table-wrap table + table { margin-top: .9rem; }
a.conversations { color: inherit; text-decoration: underline dotted var(--accent); }
tbody tr:nth-child(even) { background: var(--stripe); }
.num { text-align: right; }
table.metrics { margin: 1rem 0; }
table.metrics th { font-weight: 600; padding-right: 1.5rem; }
.source { color: var(--muted); font-size: .8rem; margin: .3rem 0 0; }
figure { margin: 1.4rem 0; }
figure .plot svg { max-width: 100%; height: auto; display: block; }
figure .plot a:hover path { opacity: .75; }
.downloads { white-space: nowrap; margin-left: .4rem; }
figcaption { color: var(--muted); font-size: .9rem; margin-top: .4rem; max-width: 46rem; }
footer { max-width: 72rem; margin: 0 auto; padding: 1rem 1.5rem 2rem; color: var(--muted);
  font-size: .8rem; border-top: 1px solid var(--rule); }
"""
