-- Statements between two resources, other than rdf:type, are the triples of the KG. A view rather than a copy:
-- the load reads them twice (their keys, then their ids), makes them distinct on ids and counts duplicates there.
CREATE OR REPLACE TEMP VIEW _st_triples AS
SELECT s AS head, p AS relation, o AS tail, NULL::VARCHAR AS src, NULL::BIGINT AS line
FROM _st_rdf WHERE o IS NOT NULL AND p <> 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
