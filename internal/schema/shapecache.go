package schema

import "sync"

// Limits of the shape cache. A stream repeats a handful of shapes; one
// whose shapes never repeat (IN lists of every length, multi-row INSERTs
// of every size) evicts the least recently used ones and stays within
// them. A statement longer than maxShapeQuery is always parsed.
const (
	maxShapes      = 1024
	maxShapeBytes  = 8 << 20
	maxShapeQuery  = 64 << 10
	scanBufferKeep = maxShapeQuery + 1024
)

// shapeCache is what readStatement knows of the shapes it met, least
// recently used evicted first. It is safe for concurrent use: mu guards
// every field but scans.
type shapeCache struct {
	mu     sync.Mutex
	byKey  map[string]*shape
	lru    shape // list head: lru.next is the most recently used
	bytes  int
	limit  int // of shapes
	budget int // of bytes

	// Counts, for tests: statements read from a shape, shapes learnt,
	// of which cacheable.
	hits, learnt, cacheable int

	scans sync.Pool // of *shapeScan
}

func newShapeCache(limit, budget int) *shapeCache {
	c := &shapeCache{byKey: map[string]*shape{}, limit: limit, budget: budget}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	c.scans.New = func() any { return &shapeScan{} }
	return c
}

// shapes is the cache readStatement reads through.
var shapes = newShapeCache(maxShapes, maxShapeBytes)

// read returns what StatementSubjects and StatementWrites say of query
// in currentSchema: from its shape's template when the cache has a
// cacheable one, else parsed, and its shape learnt.
func (c *shapeCache) read(currentSchema, query string) *statementRead {
	if len(query) > maxShapeQuery {
		return readFull(currentSchema, query)
	}
	sc := c.scans.Get().(*shapeScan)
	defer func() {
		if cap(sc.buf) <= scanBufferKeep && cap(sc.key) <= scanBufferKeep {
			c.scans.Put(sc)
		}
	}()
	if !sc.scan(currentSchema, query) {
		return readFull(currentSchema, query)
	}
	if sh := c.get(sc.key); sh != nil {
		if !sh.cacheable {
			return readFull(currentSchema, query)
		}
		return sh.read(sc.literals(query))
	}
	text := cleanQuery(query)
	p := parseText(text)
	r := readParsed(currentSchema, query, p)
	if text != string(sc.clean) {
		// The scan read the text otherwise than the parse does: its
		// shape would not be this statement's. (Tests hold this never
		// happens.)
		return r
	}
	c.put(learnShape(currentSchema, sc, r, p.err))
	return r
}

// get returns the shape of key, the most recently used from now on.
func (c *shapeCache) get(key []byte) *shape {
	c.mu.Lock()
	defer c.mu.Unlock()
	sh := c.byKey[string(key)]
	if sh == nil {
		return nil
	}
	c.unlink(sh)
	c.pushFront(sh)
	if sh.cacheable {
		c.hits++
	}
	return sh
}

// put adds a learnt shape (unless another reader learnt it first), and
// evicts the least recently used beyond the limits.
func (c *shapeCache) put(sh *shape) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey[sh.key] != nil {
		return
	}
	c.learnt++
	if sh.cacheable {
		c.cacheable++
	}
	c.byKey[sh.key] = sh
	c.pushFront(sh)
	c.bytes += sh.size
	for len(c.byKey) > c.limit || c.bytes > c.budget {
		old := c.lru.prev
		if old == &c.lru {
			break
		}
		c.unlink(old)
		delete(c.byKey, old.key)
		c.bytes -= old.size
	}
}

func (c *shapeCache) pushFront(sh *shape) {
	sh.prev, sh.next = &c.lru, c.lru.next
	c.lru.next.prev = sh
	c.lru.next = sh
}

func (c *shapeCache) unlink(sh *shape) {
	sh.prev.next, sh.next.prev = sh.next, sh.prev
	sh.prev, sh.next = nil, nil
}
