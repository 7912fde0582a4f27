SELECT localportal_num_points(t."g") AS "x", (CASE WHEN t."p" IS NULL THEN NULL ELSE 1 END) AS "y" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
