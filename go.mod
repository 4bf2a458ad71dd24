module github.com/mdmemory/memory

go 1.26

require (
	github.com/stretchr/testify v1.12.1
	github.com/yuin/goldmark v1.8.7
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
