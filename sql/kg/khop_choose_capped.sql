-- Capped expansion: each frontier node at $depth keeps at most $cap of its distinct neighbours, the first ones in
-- md5 order of (seed, node, neighbour). md5 rather than DuckDB's hash() so that the sample is the same on every
-- DuckDB version and platform: a benchmark's subgraphs must be reproducible from its seed alone.
INSERT INTO _khop_choice
WITH frontier AS (
    SELECT DISTINCT node FROM _khop_reached
    WHERE depth = $depth AND node NOT IN (SELECT node FROM _khop_choice)
),
nbrs AS (
    SELECT f.node, t.tail AS nbr FROM frontier AS f JOIN triples AS t ON t.head = f.node WHERE t.tail <> f.node
    UNION
    SELECT f.node, t.head AS nbr FROM frontier AS f JOIN triples AS t ON t.tail = f.node WHERE t.head <> f.node
)
SELECT node, nbr, count(*) OVER (PARTITION BY node) AS degree
FROM nbrs
QUALIFY row_number() OVER (PARTITION BY node ORDER BY md5(concat_ws(':', $seed, node, nbr)), nbr) <= $cap
