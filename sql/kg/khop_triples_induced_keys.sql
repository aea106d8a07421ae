-- The triples of khop_triples_induced as one BIGINT code each, ((qid * $n + head) * $r + relation) * $n + tail with
-- every id below its bound (the caller checks that the codes fit in a BIGINT and decodes them): sorting one column
-- of codes in NumPy and fetching one column cost less than DuckDB's four-key ORDER BY and four columns.
SELECT ((a.qid * $n + t.head) * $r + t.relation) * $n + t.tail AS code
FROM _khop_reached AS a
JOIN triples AS t ON t.head = a.node
JOIN _khop_reached AS b ON b.qid = a.qid AND b.node = t.tail
