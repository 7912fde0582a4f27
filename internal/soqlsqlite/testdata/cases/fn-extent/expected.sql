SELECT localportal_extent(json_extract(t."p", '$.coordinates[0]'), json_extract(t."p", '$.coordinates[1]')) AS "x" FROM "ds_func_0001" AS t LIMIT 1000
