SELECT localportal_upper(t."t") AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
