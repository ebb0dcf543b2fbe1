module example.invalid/runlet/bindings/go

go 1.24
