SELECT localportal_pad('7', 3, '0', 0) AS "x" FROM "ds_func_0001" AS t LIMIT 1
