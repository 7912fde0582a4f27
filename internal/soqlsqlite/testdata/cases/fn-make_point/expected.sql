SELECT (CASE WHEN (37.5) IS NULL OR ((-122.5)) IS NULL THEN NULL ELSE json_object('type', 'Point', 'coordinates', json_array((-122.5), 37.5)) END) AS "x" FROM "ds_func_0001" AS t LIMIT 1
