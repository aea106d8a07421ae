-- GraphEval: the pools a corrupted head, relation or tail is drawn from, each member with its index 0..n-1: every
-- entity ('e'), every relation ('r'), and when $typed the entities of one type ('type:<t>'), the heads ('dom:<r>')
-- and tails ('rng:<r>') of one relation and the relations whose heads have one primary type ('rt:<t>').
CREATE OR REPLACE TEMP TABLE _ge_pool AS
WITH members AS (
    SELECT 'e' AS pool, id AS member FROM entities
    UNION ALL SELECT 'r', id FROM relations
    UNION ALL SELECT DISTINCT 'type:' || type, entity FROM entity_types WHERE $typed
    UNION ALL SELECT DISTINCT 'dom:' || relation, head FROM triples WHERE $typed
    UNION ALL SELECT DISTINCT 'rng:' || relation, tail FROM triples WHERE $typed
    UNION ALL SELECT DISTINCT 'rt:' || h.type, x.relation FROM triples x JOIN _ge_ent h ON h.id = x.head
              WHERE $typed AND h.type IS NOT NULL
)
SELECT pool, member, row_number() OVER (PARTITION BY pool ORDER BY member) - 1 AS idx FROM members
