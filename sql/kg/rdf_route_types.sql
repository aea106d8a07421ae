-- rdf:type statements with an IRI object become entity types (their readable name is filled in later).
INSERT INTO _st_types
SELECT s, NULL, o FROM _rdf_ranked WHERE p = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type' AND o IS NOT NULL
