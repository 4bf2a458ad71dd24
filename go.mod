module github.com/mdmemory/memory

go 1.26

require (
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/yuin/goldmark v1.8.7 // indirect
)
