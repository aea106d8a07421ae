-- Distinct rdf:type statements with an IRI object become entity types (their readable name is filled in later).
INSERT INTO _st_types
SELECT DISTINCT s, NULL, o FROM _st_rdf WHERE p = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type' AND o IS NOT NULL
