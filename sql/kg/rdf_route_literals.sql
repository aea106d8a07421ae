-- Literal statements that are not used as labels (other predicates, or labels in other languages).
INSERT INTO _st_literals
SELECT s, p, lit, dt, lang FROM _rdf_ranked WHERE lit IS NOT NULL AND rank IS NULL
