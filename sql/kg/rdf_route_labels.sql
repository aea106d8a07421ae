-- Each subject's label: its best-ranked rdfs:label candidate (rank 0 first, then the text), rejected ones left out.
INSERT INTO _labels_entity
SELECT s, arg_min(lit, [rank::VARCHAR, lit]) FROM _rdf_ranked WHERE rank >= 0 GROUP BY s
