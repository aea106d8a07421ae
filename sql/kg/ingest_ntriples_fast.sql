-- N-Triples, first pass: DuckDB's CSV reader splits every line of exactly four space-separated fields
-- ("<s> <p> <o> ." or "<s> <p> "literal"[@lang|^^<dt>] ."; subjects and objects may be blank nodes) into raw
-- statement columns. Every other line (literals with spaces, tabs, comments, errors) lands in _csv_rej_err with its
-- line number and is parsed by pyoxigraph. plain marks the four-field lines whose terms need no unescaping and
-- that pyoxigraph's lenient mode reads as they are (no rdf: datatype: rdf:langString without a language tag is an
-- error in strict mode); strict mode checks their distinct IRIs and language tags afterwards. The other four-field
-- lines are kept in raw and parsed by pyoxigraph too. (Plain string functions rather than one regular expression
-- per line: several times faster on a dump.)
CREATE OR REPLACE TEMP TABLE _nt_fast AS
SELECT
    CASE WHEN plain THEN CASE WHEN starts_with(s, '<') THEN si ELSE s END END AS s,
    CASE WHEN plain THEN pi END AS p,
    CASE WHEN plain AND starts_with(o, '<') THEN oi WHEN plain AND starts_with(o, '_:') THEN o END AS o,
    CASE WHEN plain AND starts_with(o, '"') THEN lit END AS lit,
    CASE WHEN plain THEN lower(lang) END AS lang,
    CASE WHEN plain AND starts_with(o, '"') AND lang IS NULL THEN coalesce(dt, 'http://www.w3.org/2001/XMLSchema#string') END AS dt,
    plain,
    CASE WHEN NOT plain THEN concat_ws(' ', s, p, o, dot) END AS raw
FROM (
    SELECT *,
        coalesce(
            dot = '.'
            AND CASE WHEN starts_with(s, '<') THEN ends_with(s, '>') AND NOT (contains(si, '<') OR contains(si, '>') OR contains(si, '"') OR contains(si, '\'))
                          AND NOT starts_with(si, '_:')
                     ELSE regexp_full_match(s, '_:[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_-])?') END
            AND starts_with(p, '<') AND ends_with(p, '>')
            AND NOT (contains(pi, '<') OR contains(pi, '>') OR contains(pi, '"') OR contains(pi, '\'))
            AND NOT starts_with(pi, '_:')
            AND CASE WHEN starts_with(o, '<') THEN ends_with(o, '>')
                          AND NOT (contains(oi, '<') OR contains(oi, '>') OR contains(oi, '"') OR contains(oi, '\'))
                          AND NOT starts_with(oi, '_:')
                     WHEN starts_with(o, '"') THEN regexp_full_match(o, '"[^"\\]*"(@[A-Za-z]+(-[A-Za-z0-9]+)*|\^\^<[^<>"\\ ]+>)?')
                          AND NOT starts_with(coalesce(dt, ''), 'http://www.w3.org/1999/02/22-rdf-syntax-ns#')
                     WHEN starts_with(o, '_:') THEN regexp_full_match(o, '_:[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_-])?')
                     ELSE false END,
            false) AS plain
    FROM (
        SELECT s, p, o, dot,
            substring(s, 2, length(s) - 2) AS si, substring(p, 2, length(p) - 2) AS pi, substring(o, 2, length(o) - 2) AS oi,
            CASE WHEN starts_with(o, '"') THEN split_part(o, '"', 2) END AS lit,
            CASE WHEN starts_with(o, '"') AND contains(o, '"@') THEN split_part(o, '"@', 2) END AS lang,
            CASE WHEN starts_with(o, '"') AND contains(o, '"^^<') THEN rtrim(split_part(o, '"^^<', 2), '>') END AS dt
        FROM read_csv(
            $path,
            delim = ' ', quote = '', escape = '', header = false, encoding = $encoding,
            columns = {'s': 'VARCHAR', 'p': 'VARCHAR', 'o': 'VARCHAR', 'dot': 'VARCHAR'},
            auto_detect = false, strict_mode = true, null_padding = false,
            store_rejects = true, rejects_table = '_csv_rej_err', rejects_scan = '_csv_rej_scan'
        )
    )
)
