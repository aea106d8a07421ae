-- Which type each relation gives its heads and its tails under infer_types.sql (the same rule), with its triples:
-- what type inference used, for the ingest log and metadata.
SELECT
    r.key,
    CASE WHEN starts_with(r.key, '/')
        THEN list_filter(string_split(split_part(r.key, '.', 1), '/'), x -> x <> '')[-2]
        ELSE 'subject of ' || r.key END AS head_type,
    CASE WHEN starts_with(r.key, '/')
        THEN list_filter(string_split(r.key, '/'), x -> x <> '')[-1]
        ELSE 'object of ' || r.key END AS tail_type,
    count(*) AS triples
FROM relations AS r JOIN triples AS t ON t.relation = r.id
GROUP BY r.key
ORDER BY triples DESC, r.key
