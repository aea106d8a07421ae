-- GraphEval: rejected negative candidates per reason and corrupted part.
SELECT reason, part, count(*) AS candidates FROM _ge_rej GROUP BY ALL ORDER BY reason, part
