-- GraphEval: the positives dropped because another positive statement has the same text.
SELECT 'positive' AS kind, 'duplicate_statement' AS reason, NULL AS part, hkey AS head_key, rkey AS relation_key,
       tkey AS tail_key, text, NULL::BIGINT AS attempt, hkey AS positive_head_key, rkey AS positive_relation_key,
       tkey AS positive_tail_key
FROM _ge_pos_all WHERE text_rank > 1 ORDER BY relation, head, tail
