-- GraphEval: one candidate per slot still needed, drawn for attempt $attempt: the part to corrupt and the pool
-- member are chosen by MD5 draws of (seed, triple, slot, attempt). (Kept apart from the checks: one query with
-- every join takes DuckDB's optimizer far longer than running both.)
CREATE OR REPLACE TEMP TABLE _ge_drawn AS
WITH draw AS (
    SELECT n.head AS ph, n.relation AS pr, n.tail AS pt, n.j, p.head_pool, p.tail_pool, p.rel_pool,
           md5_number_upper(concat_ws(':', $seed, n.head, n.relation, n.tail, n.j, $attempt)) AS r1,
           md5_number_lower(concat_ws(':', $seed, n.head, n.relation, n.tail, n.j, $attempt)) AS r2
    FROM _ge_need n JOIN _ge_pos p ON p.head = n.head AND p.relation = n.relation AND p.tail = n.tail
), part AS (
    SELECT *, list_extract($parts, (r1 % len($parts))::BIGINT + 1) AS part FROM draw
), pooled AS (
    SELECT *, CASE part WHEN 'head' THEN head_pool WHEN 'tail' THEN tail_pool ELSE rel_pool END AS pool FROM part
), indexed AS (
    SELECT d.*, (d.r2 % s.n)::BIGINT AS idx FROM pooled d JOIN _ge_pool_size s ON s.pool = d.pool
)
SELECT d.ph, d.pr, d.pt, d.j, d.part,
       CASE WHEN d.part = 'head' THEN m.member ELSE d.ph END AS head,
       CASE WHEN d.part = 'relation' THEN m.member ELSE d.pr END AS relation,
       CASE WHEN d.part = 'tail' THEN m.member ELSE d.pt END AS tail
FROM indexed d JOIN _ge_pool m ON m.pool = d.pool AND m.idx = d.idx
