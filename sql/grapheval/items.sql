-- GraphEval: the items, from the drawn ids (_ge_pos: pos, head, relation, tail, negatives; _ge_neg: pos, j, attempt,
-- part, head, relation, tail). Each positive with at least one verified negative, then its negatives; a positive
-- and its negatives share group_id. The breakdown of every item is its group's (relation label, primary head and
-- tail type, degree bucket of the positive: the mean of head and tail degree) plus its own polarity and corrupted
-- part.
WITH pos AS (
    SELECT p.pos, p.head, p.relation, p.tail, h.key AS hkey, r.key AS rkey, t.key AS tkey, h.label AS hlabel,
           r.label AS rlabel, t.label AS tlabel, h.type AS htype, t.type AS ttype, tp.template, tp.source,
           tp.pre || CASE WHEN tp.head_first THEN h.label ELSE t.label END || tp.mid
                  || CASE WHEN tp.head_first THEN t.label ELSE h.label END || tp.post AS text,
           p.negatives, (h.deg + t.deg) / 2.0 AS mean_degree,
           left(sha256(concat_ws(chr(31), $snapshot, 'grapheval', h.key, r.key, t.key)), 16) AS group_id
    FROM _ge_pos p JOIN _ge_ent h ON h.id = p.head JOIN _ge_ent t ON t.id = p.tail
    JOIN relations r ON r.id = p.relation JOIN _ge_templates tp ON tp.relation = p.relation
    WHERE p.negatives > 0
), rows AS (
    SELECT p.group_id, 0 AS j, 'positive' AS polarity, 'none' AS corrupted, p.hkey AS head_key, p.rkey AS relation_key,
           p.tkey AS tail_key, p.hlabel AS head_label, p.rlabel AS relation_label, p.tlabel AS tail_label, p.text,
           p.template, p.source AS template_source, NULL::BIGINT AS attempt,
           p.pos, p.hkey, p.rkey, p.tkey, p.rlabel, p.htype, p.ttype, p.negatives, p.mean_degree
    FROM pos p
    UNION ALL
    SELECT p.group_id, n.j + 1, 'negative', n.part, h.key, r.key, t.key, h.label, r.label, t.label,
           tp.pre || CASE WHEN tp.head_first THEN h.label ELSE t.label END || tp.mid
                  || CASE WHEN tp.head_first THEN t.label ELSE h.label END || tp.post,
           tp.template, tp.source, n.attempt,
           p.pos, p.hkey, p.rkey, p.tkey, p.rlabel, p.htype, p.ttype, p.negatives, p.mean_degree
    FROM _ge_neg n JOIN pos p ON p.pos = n.pos
    JOIN _ge_ent h ON h.id = n.head JOIN _ge_ent t ON t.id = n.tail JOIN relations r ON r.id = n.relation
    JOIN _ge_templates tp ON tp.relation = n.relation
)
SELECT
    left(sha256(concat_ws(chr(31), $snapshot, 'grapheval', polarity, head_key, relation_key, tail_key, hkey, rkey,
                          tkey)), 16)
        AS item_id,
    'grapheval' AS suite, 'statement' AS task, 'true_false_idk' AS answer_format, text AS question,
    CASE WHEN polarity = 'positive' THEN 'true' ELSE 'false' END AS expected, group_id,
    MAP {'relation': rlabel, 'head_type': coalesce(htype, 'untyped'), 'tail_type': coalesce(ttype, 'untyped'),
         'degree_bucket': CASE WHEN mean_degree <= 2 THEN '<=2' WHEN mean_degree <= 8 THEN '2-8'
                               WHEN mean_degree <= 32 THEN '8-32' WHEN mean_degree <= 128 THEN '32-128'
                               WHEN mean_degree <= 512 THEN '128-512' ELSE '>512' END,
         'polarity': polarity, 'corrupted': corrupted} AS breakdown,
    json_object('snapshot_id', $snapshot, 'triple', [head_key, relation_key, tail_key],
                'labels', [head_label, relation_label, tail_label], 'positive', [hkey, rkey, tkey],
                'corrupted', corrupted, 'template', template, 'template_source', template_source,
                'seed', $seed, 'attempt', attempt,
                -- a positive answered true affirms its KG triple (read by the cross-suite consistency view)
                'asserts', CASE WHEN polarity = 'positive' THEN [head_label, relation_key, tail_label] END)::VARCHAR
        AS evidence,
    polarity, corrupted, head_key, relation_key, tail_key, head_label, relation_label, tail_label, template_source,
    attempt, negatives, mean_degree
FROM rows
ORDER BY pos, j
