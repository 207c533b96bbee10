module github.com/max-c/max_c/bindings/go/maxc

go 1.22
