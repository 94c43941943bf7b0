module blind4/petstore

go 1.19
