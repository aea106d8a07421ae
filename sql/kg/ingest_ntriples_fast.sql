-- Lenient N-Triples, first pass: lines of exactly four space-separated fields ("<s> <p> <o> ." or
-- "<s> <p> "literal"[@lang|^^<dt>] .") are read by DuckDB's CSV reader and split into raw statement columns;
-- every other line (literals with spaces, tabs, blank nodes, comments, errors) lands in _csv_rej_err with its
-- line number and is parsed by pyoxigraph. plain is false for a four-field line of another shape. (Plain string
-- functions rather than regular expressions for the IRIs: several times faster on a dump.)
CREATE OR REPLACE TEMP TABLE _nt_fast AS
SELECT
    si AS s, pi AS p,
    CASE WHEN starts_with(o, '<') THEN oi END AS o,
    CASE WHEN starts_with(o, '"') THEN split_part(o, '"', 2) END AS lit,
    CASE WHEN starts_with(o, '"') AND contains(o, '"@') THEN lower(split_part(o, '"@', 2)) END AS lang,
    CASE WHEN NOT starts_with(o, '"') OR contains(o, '"@') THEN NULL
         WHEN contains(o, '"^^<') THEN rtrim(split_part(o, '"^^<', 2), '>')
         ELSE 'http://www.w3.org/2001/XMLSchema#string' END AS dt,
    dot = '.'
        AND starts_with(s, '<') AND ends_with(s, '>') AND starts_with(p, '<') AND ends_with(p, '>')
        AND NOT (contains(si, '<') OR contains(si, '>') OR contains(si, '"') OR contains(si, '\'))
        AND NOT (contains(pi, '<') OR contains(pi, '>') OR contains(pi, '"') OR contains(pi, '\'))
        AND CASE WHEN starts_with(o, '<') THEN ends_with(o, '>')
                      AND NOT (contains(oi, '<') OR contains(oi, '>') OR contains(oi, '"') OR contains(oi, '\'))
                 WHEN starts_with(o, '"') THEN regexp_full_match(o, '"[^"\\]*"(@[A-Za-z]+(-[A-Za-z0-9]+)*|\^\^<[^<>"\\ ]+>)?')
                 ELSE false END AS plain
FROM (
    SELECT s, p, o, dot,
        substring(s, 2, length(s) - 2) AS si, substring(p, 2, length(p) - 2) AS pi, substring(o, 2, length(o) - 2) AS oi
    FROM read_csv(
        $path,
        delim = ' ', quote = '', escape = '', header = false, encoding = $encoding,
        columns = {'s': 'VARCHAR', 'p': 'VARCHAR', 'o': 'VARCHAR', 'dot': 'VARCHAR'},
        auto_detect = false, strict_mode = true, null_padding = false,
        store_rejects = true, rejects_table = '_csv_rej_err', rejects_scan = '_csv_rej_scan'
    )
)
