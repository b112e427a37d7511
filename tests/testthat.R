library(testthat)
library(mklearn)

test_check("mklearn")
