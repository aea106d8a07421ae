-- GraphEval: the items. Each positive with at least one verified negative, then its negatives; a positive and its
-- negatives share group_id. The breakdown of every item is its group's (relation label, primary head and tail type,
-- degree bucket of the positive: the mean of head and tail degree) plus its own polarity and corrupted part.
WITH counts AS (
    SELECT ph, pr, pt, count(*) AS negatives FROM _ge_neg GROUP BY ALL
), pos AS (
    SELECT p.head, p.relation, p.tail, p.hkey, p.rkey, p.tkey, p.hlabel, p.rlabel, p.tlabel, p.htype, p.ttype,
           p.text, p.template, p.source, c.negatives, (p.hdeg + p.tdeg) / 2.0 AS mean_degree,
           left(sha256(concat_ws(chr(31), $snapshot, 'grapheval', p.hkey, p.rkey, p.tkey)), 16) AS group_id
    FROM _ge_pos p JOIN counts c ON c.ph = p.head AND c.pr = p.relation AND c.pt = p.tail
), rows AS (
    SELECT p.group_id, 0 AS j, 'positive' AS polarity, 'none' AS corrupted, p.hkey AS head_key, p.rkey AS relation_key,
           p.tkey AS tail_key, p.hlabel AS head_label, p.rlabel AS relation_label, p.tlabel AS tail_label, p.text,
           p.template, p.source AS template_source, NULL::BIGINT AS attempt,
           p.head, p.relation, p.tail, p.hkey, p.rkey, p.tkey, p.rlabel, p.htype, p.ttype, p.negatives, p.mean_degree
    FROM pos p
    UNION ALL
    SELECT p.group_id, n.j + 1, 'negative', n.part, h.key, r.key, t.key, h.label, r.label, t.label, n.text,
           tp.template, tp.source, n.attempt,
           p.head, p.relation, p.tail, p.hkey, p.rkey, p.tkey, p.rlabel, p.htype, p.ttype, p.negatives, p.mean_degree
    FROM _ge_neg n JOIN pos p ON p.head = n.ph AND p.relation = n.pr AND p.tail = n.pt
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
ORDER BY relation, head, tail, j
