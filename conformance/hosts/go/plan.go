// The plan a conformance host reads on standard input (conformance/runner/src/plan.rs says the
// format): the program, the texts handed to Runlet unread, and the scripted tools' cases.

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const planHeader = "runlet-conformance-plan 1\n"

type plan struct {
	Source, Registry, Inputs, Limits, Unanswered string
	// CrashAfterAppends is -1 for no crash.
	CrashAfterAppends int64
	Tools             []string
	Cases             []*scriptedCase
}

type scriptedCase struct {
	Tool    string
	Args    []byte // nil: any arguments
	Times   int64  // -1: any number
	DelayMs int64
	Result  []byte
	IsError bool
	Error   struct {
		Code, Message string
		Retryable     bool
		RetryAfterMs  int64 // -1: no hint
		Details       []byte
	}
	used int64 // guarded by the tools' lock
}

func readPlan(r io.Reader) (*plan, error) {
	in := bufio.NewReader(r)
	header := make([]byte, len(planHeader))
	if _, err := io.ReadFull(in, header); err != nil || string(header) != planHeader {
		return nil, fmt.Errorf("standard input is not a conformance plan (version 1)")
	}
	p := &plan{CrashAfterAppends: -1}
	for {
		line, err := in.ReadString('\n')
		if err == io.EOF && line == "" {
			return p, nil
		}
		key, length, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		n, convErr := strconv.Atoi(length)
		if err != nil || !ok || convErr != nil || n < 0 {
			return nil, fmt.Errorf("a plan line is not `KEY LENGTH`: %q", line)
		}
		value := make([]byte, n+1)
		if _, err := io.ReadFull(in, value); err != nil || value[n] != '\n' {
			return nil, fmt.Errorf("the plan field %s runs past the end of the input", key)
		}
		if err := p.field(key, value[:n]); err != nil {
			return nil, err
		}
	}
}

func (p *plan) field(key string, value []byte) error {
	number := func() (int64, error) {
		n, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("the plan field %s is not a number: %q", key, value)
		}
		return n, nil
	}
	var err error
	switch key {
	case "source":
		p.Source = string(value)
	case "registry":
		p.Registry = string(value)
	case "inputs":
		p.Inputs = string(value)
	case "limits":
		p.Limits = string(value)
	case "unanswered":
		p.Unanswered = string(value)
	case "tool":
		p.Tools = append(p.Tools, string(value))
	case "crash":
		p.CrashAfterAppends, err = number()
	case "case":
		c := &scriptedCase{Tool: string(value), Times: -1}
		c.Error.RetryAfterMs = -1
		p.Cases = append(p.Cases, c)
	default:
		if len(p.Cases) == 0 {
			return fmt.Errorf("the case field %s comes before any `case`", key)
		}
		return p.caseField(p.Cases[len(p.Cases)-1], key, value, number)
	}
	return err
}

func (p *plan) caseField(c *scriptedCase, key string, value []byte, number func() (int64, error)) error {
	var err error
	switch key {
	case "args":
		c.Args = bytes.Clone(value)
	case "times":
		c.Times, err = number()
	case "delay_ms":
		c.DelayMs, err = number()
	case "result":
		c.Result = bytes.Clone(value)
	case "error_code":
		c.IsError, c.Error.Code = true, string(value)
	case "error_message":
		c.Error.Message = string(value)
	case "error_retryable":
		c.Error.Retryable = string(value) == "true"
	case "error_retry_after_ms":
		c.Error.RetryAfterMs, err = number()
	case "error_details":
		c.Error.Details = bytes.Clone(value)
	default:
		return fmt.Errorf("the plan has an unknown field %s", key)
	}
	return err
}
