-- The rows of a single-valued side file (labels, type names) that come after the first row of their key, with the
-- value and line of that first row: a repeat of the same value is a duplicate, another value is rejected.
CREATE OR REPLACE TEMP TABLE _side_later AS
SELECT r.key, r.value, r.line, r.seq, f.value AS kept, f.line AS kept_line
FROM _side_rows r
JOIN (SELECT key, arg_min(value, seq) AS value, arg_min(line, seq) AS line, min(seq) AS seq FROM _side_rows GROUP BY key) f
    ON f.key = r.key AND r.seq > f.seq
