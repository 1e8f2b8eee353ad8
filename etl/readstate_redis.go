package etl

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/etl/fencing"
)

// DefaultReadStatePrefix starts the Redis keys of a RedisReadState unless
// NewRedisReadState is given another prefix.
const DefaultReadStatePrefix = "agora:files:"

// RedisReadState keeps marks in Redis: under each key a hash of file path
// to mark (JSON) and, beside it, the highest fencing token that saved. Both
// keys share a hash tag, so a Redis Cluster keeps them on one node and a
// save is one script, atomic.
type RedisReadState struct {
	client redis.UniversalClient
	prefix string
}

// NewRedisReadState returns a state kept in Redis through client, with keys
// starting with prefix ("" means DefaultReadStatePrefix).
func NewRedisReadState(client redis.UniversalClient, prefix string) *RedisReadState {
	if prefix == "" {
		prefix = DefaultReadStatePrefix
	}
	return &RedisReadState{client: client, prefix: prefix}
}

func (s *RedisReadState) keys(key string) []string {
	base := s.prefix + "{" + key + "}"
	return []string{base, base + ":token"}
}

// Load returns the marks saved under key.
func (s *RedisReadState) Load(ctx context.Context, key string) (map[string]FileMark, error) {
	raw, err := s.client.HGetAll(ctx, s.keys(key)[0]).Result()
	if err != nil {
		return nil, fmt.Errorf("etl: read state: %w", err)
	}
	out := make(map[string]FileMark, len(raw))
	for p, v := range raw {
		var m FileMark
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			return nil, fmt.Errorf("etl: read state: mark of %s: %w", p, err)
		}
		out[p] = m
	}
	return out, nil
}

// saveScript applies a save unless a higher token saved before, which it
// returns; -1 means saved. ARGV: token, number of marks to set, then path
// and mark pairs, then paths to remove.
var saveScript = redis.NewScript(`
local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
local token = tonumber(ARGV[1])
if token < stored then return stored end
if token > stored then redis.call('SET', KEYS[2], ARGV[1]) end
local n = tonumber(ARGV[2])
for i = 0, n - 1 do redis.call('HSET', KEYS[1], ARGV[3 + 2 * i], ARGV[4 + 2 * i]) end
for i = 3 + 2 * n, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
return -1
`)

// Save sets and removes marks under key, in one script.
func (s *RedisReadState) Save(ctx context.Context, key string, token int64, set map[string]FileMark, del []string) error {
	args := make([]any, 0, 2+2*len(set)+len(del))
	args = append(args, token, len(set))
	for p, m := range set {
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("etl: read state: %w", err)
		}
		args = append(args, p, string(b))
	}
	for _, p := range del {
		args = append(args, p)
	}
	stored, err := saveScript.Run(ctx, s.client, s.keys(key), args...).Int64()
	if err != nil {
		return fmt.Errorf("etl: read state: %w", err)
	}
	if stored >= 0 {
		return fencing.Check(ctx, nil, "read state "+key, token, stored)
	}
	return nil
}
