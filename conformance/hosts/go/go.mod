module example.invalid/runlet/conformance/hosts/go

go 1.24

require example.invalid/runlet/bindings/go v0.0.0

replace example.invalid/runlet/bindings/go => ../../../bindings/go
