SELECT localportal_distance(json_extract(t."p", '$.coordinates[1]'), json_extract(t."p", '$.coordinates[0]'), 37.78, -122.41) AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
